"""`stance_nb leaderboard`: one table over datasets and systems from the benchmark's job store, with significance tests
and a self-contained HTML page; its cells are the benchmark notebook's Table 4 cells for the same jobs."""
import json, os
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
