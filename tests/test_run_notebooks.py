"Execute every result notebook (`nbs/run_*.ipynb`) with its smoke parameters through papermill's Python API."
import json, os, shutil, sys
from pathlib import Path
import pandas as pd
import pytest

NBS = Path(__file__).resolve().parents[1]/'nbs'
RUN_NBS = sorted(NBS.glob('run_*.ipynb'))
GOLDEN = Path(__file__).resolve().parent/'golden'/'smoke'   # the smoke tables every result notebook wrote, committed
NUMERIC = ['ours_mean', 'ours_std', 'delta', 'note',          # what another precision moves (the notes carry collapse shares),
           'n_labels', 'top_label', 'top_share', 'gold_share', 'collapsed']  # the predicted labels' distribution too (gold_share: of the top label)

def _precision() -> str:
    from stance_nb.train import resolve_precision
    return resolve_precision('auto')

def _tables(outputs:Path) -> dict:
    "The smoke run's tables (and its predicted labels' shares, without the job folders, whose names hash temporary paths)."
    out = {}
    for p in sorted(outputs.rglob('*-smoke_*.csv')):
        if 'runs' in p.relative_to(outputs).parts: continue
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
        out[p.name] = df.drop(columns=['job'], errors='ignore')
    return out

def check_golden(nb:Path, outputs:Path):
    """The smoke run's tables equal the committed ones cell for cell. `STANCE_NB_UPDATE_GOLDEN=1` writes them instead (a change
    that means to move a number). On a machine where `mixed_precision='auto'` resolves to another precision than the one the
    tables were made in, the transformer rows' numbers differ by design: then rows, columns, metrics, paper values and counts
    are compared, not our numbers."""
    got, folder = _tables(outputs), GOLDEN/nb.stem
    if os.environ.get('STANCE_NB_UPDATE_GOLDEN'):
        shutil.rmtree(folder, ignore_errors=True); folder.mkdir(parents=True)
        for name, df in got.items(): df.to_csv(folder/name, index=False)
        (GOLDEN/'precision.json').write_text(json.dumps({'auto': _precision()}) + '\n')
        return
    same_precision = json.loads((GOLDEN/'precision.json').read_text())['auto'] == _precision()
    want = {p.name: pd.read_csv(p, dtype=str, keep_default_na=False) for p in sorted(folder.glob('*.csv'))}
    assert sorted(got) == sorted(want), f"{nb.name}: tables {sorted(got)}, committed {sorted(want)}"
    for name, df in want.items():
        a, b = (got[name], df) if same_precision else (got[name].drop(columns=[c for c in NUMERIC if c in df]), df.drop(columns=[c for c in NUMERIC if c in df]))
        pd.testing.assert_frame_equal(a, b, obj=f"{nb.stem}/{name}")

def _parameters_cell(nb_path):
    nb = json.loads(nb_path.read_text(encoding='utf-8'))
    code = [c for c in nb['cells'] if c['cell_type'] == 'code']
    return code[0] if code else None

def test_result_notebooks_exist():
    assert {p.name for p in RUN_NBS} >= {'run_xstance.ipynb', 'run_cheese.ipynb', 'run_ezstance.ipynb', 'run_benchmark.ipynb'}

@pytest.mark.parametrize('nb', RUN_NBS, ids=[p.stem for p in RUN_NBS])
def test_smoke_defaults_false(nb):
    "The papers' runs are the defaults: every result notebook's `smoke` parameter defaults to False."
    import papermill as pm
    params = pm.inspect_notebook(str(nb))
    assert 'smoke' in params and params['smoke']['default'] == 'False', f"{nb.name}: smoke default {params.get('smoke')}"

@pytest.mark.parametrize('nb', RUN_NBS, ids=[p.stem for p in RUN_NBS])
def test_parameters_cell_first(nb):
    "papermill injects parameters after the cell tagged `parameters`: it must be the first code cell."
    cell = _parameters_cell(nb)
    assert cell is not None and 'parameters' in cell.get('metadata', {}).get('tags', []), f'{nb.name}: first code cell is not tagged parameters'

def docs_run(nb:Path) -> Path|None:
    """The tables of `nb`'s smoke run in the documentation build (`tools/build_docs.py` runs every result notebook with `smoke=True`
    in a temporary outputs folder, as below, and keeps its tables), when that run executed the current notebook and package
    sources (its stamp is their hash): the same run need not be made twice in one test session."""
    sys.path.insert(0, str(NBS.parent/'tools'))
    from build_docs import CACHE, source_hash
    stamp, out = CACHE/'executed'/f'{nb.stem}.sha256', CACHE/'outputs'/nb.stem
    return out if stamp.is_file() and out.is_dir() and stamp.read_text() == source_hash(nb) else None

@pytest.mark.parametrize('nb', RUN_NBS, ids=[p.stem for p in RUN_NBS])
def test_run_notebook_smoke(nb, tmp_path, monkeypatch):
    "The notebook runs end to end with `smoke=True`, writing only under a temporary outputs folder (or did so in the documentation build)."
    import papermill as pm
    outputs = docs_run(nb)
    if outputs is None:
        outputs = tmp_path/'outputs'
        monkeypatch.setenv('STANCE_NB_OUTPUTS', str(outputs))
        monkeypatch.setenv('STANCE_NB_QUIET', '1')
        pm.execute_notebook(str(nb), str(tmp_path/nb.name), parameters={'smoke': True}, kernel_name='python3', cwd=str(NBS), progress_bar=False)
    assert any(outputs.rglob('*.json')), f'{nb.name} wrote no run record'
    check_golden(nb, outputs)

def test_golden_check_fails_on_another_number(tmp_path, monkeypatch):
    "The comparison with the committed tables sees a changed number."
    monkeypatch.delenv('STANCE_NB_UPDATE_GOLDEN', raising=False)   # compare, never rewrite, here
    nb = NBS/'run_cheese.ipynb'
    out = tmp_path/'outputs'/'cheese'; out.mkdir(parents=True)
    for p in (GOLDEN/nb.stem).glob('*.csv'): shutil.copy(p, out/p.name)
    check_golden(nb, tmp_path/'outputs')
    t = pd.read_csv(out/'cheese-smoke_table7.csv')
    t.loc[t.n > 0, 'ours_mean'] += 0.01; t.loc[t.n > 0, 'n'] += 1   # (our numbers are compared where the precision is the same)
    t.to_csv(out/'cheese-smoke_table7.csv', index=False)
    with pytest.raises(AssertionError, match='cheese-smoke_table7'): check_golden(nb, tmp_path/'outputs')

def test_unknown_parameter_fails(tmp_path):
    "A mistyped parameter stops the run at once instead of being silently ignored."
    import papermill as pm
    if not RUN_NBS: pytest.skip('no result notebooks')
    nb = NBS/'run_xstance.ipynb'
    with pytest.raises(Exception, match='lr_typo'):
        pm.execute_notebook(str(nb), str(tmp_path/'out.ipynb'), parameters={'lr_typo': 1e-3}, kernel_name='python3', cwd=str(NBS), progress_bar=False)

def test_benchmark_and_robustness_give_the_same_tables_5_and_7(tmp_path, monkeypatch):
    "One c_a rule: `run_benchmark` and `run_robustness` on one job store write the same Tables 5 and 7 (the robustness run trains nothing)."
    import papermill as pm
    out = tmp_path/'outputs'
    monkeypatch.setenv('STANCE_NB_OUTPUTS', str(out)); monkeypatch.setenv('STANCE_NB_QUIET', '1')
    for nb, params in (('run_benchmark', {'smoke': True, 'tables': ['5', '7']}), ('run_robustness', {'smoke': True})):
        pm.execute_notebook(str(NBS/f'{nb}.ipynb'), str(tmp_path/f'{nb}.ipynb'), parameters=params, kernel_name='python3', cwd=str(NBS),
                            progress_bar=False)
    cond = json.loads((out/'benchmark'/'robustness-smoke_conditions.json').read_text())
    assert cond['jobs'] == cond['reused'] > 0, (cond['jobs'], cond['reused'])   # every job is one the benchmark run finished
    assert cond['c_a']['spelling'] == {'value': 0.584, 'source': "the paper's Table 5"}, cond['c_a']
    for t in ('5', '7'):
        pd.testing.assert_frame_equal(pd.read_csv(out/'benchmark'/f'robustness-smoke_table{t}.csv'),
                                      pd.read_csv(out/'benchmark'/f'benchmark-smoke_table{t}.csv'), obj=f'Table {t}')
